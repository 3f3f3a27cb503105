// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ChargeCloneV1} from "./ChargeCloneV1.sol";

/// @title ChargeFactoryV1
/// @notice Version 1, kept so that clones made before version 2 still settle (ChargeFactoryV2 is the
/// current one). Deploys one EIP-1167 clone of ChargeCloneV1 per charge with CREATE2, the merchant's wallet and
/// fee appended to the clone's code as immutable arguments (OpenZeppelin Clones v5.2 layout). The clone's
/// address follows from (factory, salt, wallet, fee), so it is known before deployment and money sent
/// to it early is flushed once it is deployed. Anyone may call every function; none can redirect funds.
contract ChargeFactoryV1 {
    /// @notice The ChargeCloneV1 every clone delegates to (it holds the fee recipient).
    address public immutable implementation;

    error FeeTooHigh(uint256 feeBps);
    error AlreadyDeployed(address clone);
    error OutOfGas();
    error LengthMismatch();
    error DeployFailed(address clone);

    /// @dev Comfortably above a flush's worst case (two first-time balance writes: ~70k).
    uint256 private constant FLUSH_GAS = 150_000;
    /// @dev Comfortably above one clone's creation (~41k for CREATE2 and 67 bytes of code).
    uint256 private constant DEPLOY_GAS = 80_000;

    constructor(address feeRecipient) {
        implementation = address(new ChargeCloneV1(feeRecipient));
    }

    /// @notice The address `deploy(salt, wallet, feeBps)` creates.
    function predict(bytes32 salt, address wallet, uint16 feeBps) public view returns (address) {
        return _create2Address(salt, keccak256(_initCode(wallet, feeBps)));
    }

    /// @notice Deploys the clone for `salt`; reverts if it already exists.
    function deploy(bytes32 salt, address wallet, uint16 feeBps) public returns (address clone) {
        if (feeBps > 10_000) revert FeeTooHigh(feeBps);
        bytes memory code = _initCode(wallet, feeBps);
        assembly {
            clone := create2(0, add(code, 32), mload(code), salt)
        }
        if (clone == address(0)) revert AlreadyDeployed(predict(salt, wallet, feeBps));
    }

    /// @notice Deploys the clones of many charges in one transaction (entry i from salts[i], wallets[i],
    /// feeBps[i]). A clone that already exists (deployed earlier, by anyone) is skipped, so a batch
    /// sent twice, or raced by someone else, still succeeds and leaves every clone deployed once.
    function deployMany(bytes32[] calldata salts, address[] calldata wallets, uint16[] calldata feeBps) external {
        uint256 n = salts.length;
        if (wallets.length != n || feeBps.length != n) revert LengthMismatch();
        for (uint256 i; i < n; ++i) {
            if (feeBps[i] > 10_000) revert FeeTooHigh(feeBps[i]);
            bytes memory code = _initCode(wallets[i], feeBps[i]);
            bytes32 salt = salts[i];
            // Checked first: CREATE2 onto an existing contract fails by burning all the gas it was given.
            address expected = _create2Address(salt, keccak256(code));
            if (expected.code.length != 0) continue;
            // As in flushMany: enough gas for each creation, so none can fail for want of it.
            if (gasleft() < DEPLOY_GAS) revert OutOfGas();
            address clone;
            assembly {
                clone := create2(0, add(code, 32), mload(code), salt)
            }
            if (clone != expected) revert DeployFailed(expected);
        }
    }

    /// @notice Deploys the clone if needed, then flushes its balance of `token`.
    function deployAndFlush(bytes32 salt, address wallet, uint16 feeBps, address token) external returns (address clone, uint256 net, uint256 fee) {
        clone = predict(salt, wallet, feeBps);
        if (clone.code.length == 0) deploy(salt, wallet, feeBps);
        (net, fee) = ChargeCloneV1(clone).flush(token);
    }

    /// @notice Flushes `token` from many clones in one transaction. A clone that cannot pay (no code,
    /// a token that refuses) is skipped so it cannot hold up the others; each success emits `Flushed`.
    function flushMany(address token, address[] calldata clones) external {
        bytes memory call = abi.encodeCall(ChargeCloneV1.flush, (token));
        for (uint256 i; i < clones.length; ++i) {
            // Each flush starts with more gas than any flush needs, so a failure is the clone's own
            // and never a gas limit cut short (gas estimation would otherwise find a limit that
            // silently skips the last clones).
            if (gasleft() < FLUSH_GAS) revert OutOfGas();
            (bool ok, ) = clones[i].call(call);
            ok; // a clone that cannot pay is skipped on purpose
        }
    }

    /// @dev The address CREATE2 gives init code of hash `codeHash` deployed by this factory with `salt`.
    function _create2Address(bytes32 salt, bytes32 codeHash) private view returns (address) {
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, codeHash)))));
    }

    /// @dev Creation code of a clone: a 10-byte constructor that returns the 45-byte EIP-1167 runtime
    /// pointing at the implementation, followed by the 22 bytes of arguments.
    function _initCode(address wallet, uint16 feeBps) private view returns (bytes memory) {
        return
            abi.encodePacked(
                hex"61", uint16(45 + 22), hex"3d81600a3d39f3",
                hex"363d3d373d3d3d363d73", implementation, hex"5af43d82803e903d91602b57fd5bf3",
                wallet, feeBps
            );
    }
}
