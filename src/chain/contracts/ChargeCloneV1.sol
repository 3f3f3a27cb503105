// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ChargeCloneV1
/// @notice Version 1, kept so that clones made before version 2 still settle (ChargeCloneV2 is the
/// current one). The code behind every charge's payment address. Each charge gets an EIP-1167 clone of
/// this contract whose bytecode carries two immutable arguments: the merchant's wallet (20 bytes)
/// and the fee in basis points (2 bytes). The protocol's fee recipient is fixed in this
/// implementation when it is deployed. The only thing a clone can do with money is `flush`: pay all
/// of a token to the merchant, minus the fee to the fee recipient. There is no owner, no admin path,
/// no upgrade and no selfdestruct, and anyone may call `flush`: whoever calls it, funds can only ever
/// reach those two addresses. Native ETH sent to a clone is refused (there is no receive function).
contract ChargeCloneV1 {
    /// @notice Receives floor(balance * feeBps / 10000) of every flush.
    address public immutable feeRecipient;
    address private immutable implementation;

    /// @notice A flush paid `net` to the merchant and `fee` to the fee recipient.
    event Flushed(address indexed token, address indexed merchant, uint256 net, uint256 fee);

    error NotAClone();
    error TransferFailed(address token, address to);

    constructor(address feeRecipient_) {
        feeRecipient = feeRecipient_;
        implementation = address(this);
    }

    /// @notice Pays this clone's whole balance of `token`: the fee to the fee recipient, the rest to
    /// the merchant. A zero balance is a no-op.
    function flush(address token) external returns (uint256 net, uint256 fee) {
        // Called directly, this contract has no arguments: its own code would be read as garbage.
        if (address(this) == implementation) revert NotAClone();
        (address wallet, uint256 bps) = _args();
        uint256 balance = IERC20Balance(token).balanceOf(address(this));
        if (balance == 0) return (0, 0);
        fee = (balance * bps) / 10_000;
        net = balance - fee;
        if (net != 0) _transfer(token, wallet, net);
        if (fee != 0) _transfer(token, feeRecipient, fee);
        emit Flushed(token, wallet, net, fee);
    }

    /// @notice The merchant's wallet this clone pays.
    function merchant() external view returns (address wallet) {
        (wallet, ) = _args();
    }

    /// @notice The fee in basis points this clone takes.
    function feeBps() external view returns (uint256 bps) {
        (, bps) = _args();
    }

    /// @dev The 22 bytes after the 45-byte EIP-1167 runtime: wallet (20) then fee bps (2).
    function _args() private view returns (address wallet, uint256 bps) {
        assembly {
            extcodecopy(address(), 0, 45, 22)
            let word := mload(0)
            wallet := shr(96, word)
            bps := and(shr(80, word), 0xffff)
        }
    }

    /// @dev ERC-20 transfer that accepts tokens returning nothing and fails on `false` or a revert.
    function _transfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory ret) = token.call(abi.encodeWithSelector(0xa9059cbb, to, amount));
        if (!ok || (ret.length == 0 ? token.code.length == 0 : !abi.decode(ret, (bool)))) revert TransferFailed(token, to);
    }
}

interface IERC20Balance {
    function balanceOf(address account) external view returns (uint256);
}
