// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Multicall3
/// @notice The part of Multicall3 (0xcA11bde05977b3631167028862bE2a173976CA11 on every public chain)
/// that the service reads balances with: `aggregate3` and `getEthBalance`, with the same ABI. Only the
/// local devnet and tests deploy this one (at that same address); real chains have the original.
contract Multicall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    error CallFailed(uint256 index);

    /// @notice Makes every call in order; reverts if one fails whose `allowFailure` is false.
    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i; i < calls.length; ++i) {
            (bool ok, bytes memory data) = calls[i].target.call(calls[i].callData);
            if (!ok && !calls[i].allowFailure) revert CallFailed(i);
            results[i] = Result(ok, data);
        }
    }

    /// @notice The native balance of `account`.
    function getEthBalance(address account) external view returns (uint256) {
        return account.balance;
    }
}
