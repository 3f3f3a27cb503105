// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ChargeFactoryV2
/// @notice Makes and runs every charge's payment address (version 2). A charge's address is an
/// EIP-1167 minimal proxy (the 44-byte ERC-7511 form) whose code delegates to this very contract, created with CREATE2 under
/// the salt keccak256(abi.encode(charge, merchant, feeBps)): the address itself commits to where its
/// money goes, so a clone stores nothing, and every call names its charge, merchant and fee, which
/// the clone checks against its own address.
///
/// Counterfactual: an address is known, and takes money, long before it has code. Nothing is
/// deployed when a buyer picks a chain; `payout` deploys a clone in the transaction that first pays
/// it out, many clones at once, so an abandoned charge costs nothing. Deployed through the
/// deterministic deployment proxy (0x4e59b44847b379578588920cA78FbF26c0B4956C) with the same fee
/// recipient, this contract and so every charge's address are the same on every chain: money sent
/// on the wrong chain is paid out there too.
///
/// A clone pays its balance of any ERC-20, or of the native coin, to the merchant less the fee,
/// floor(amount * feeBps / 10000), all of it or nothing. The fee goes to the fee recipient or, when
/// that transfer fails (a fee recipient the token has blacklisted), to this factory, which holds it
/// for the fee recipient (`withdrawFees`): the merchant's share never waits for the fee. No owner, no
/// admin path, no upgrade, no selfdestruct; anyone may call anything, and money can only ever reach a
/// clone's merchant, the fee recipient, or this factory on the fee recipient's behalf.
///
/// The payout path is partly assembly: it runs for every paid charge, and a payout of one charge,
/// clone creation included, stays under 100k gas on Circle's USDC.
contract ChargeFactoryV2 {
    /// @notice Receives every fee (directly, or later through `withdrawFees`).
    address public immutable feeRecipient;
    /// @dev This factory's address: what tells a call on the factory from one through a clone.
    address private immutable factory;
    /// @dev keccak256 of a clone's creation code.
    bytes32 private immutable cloneCodeHash;

    /// @notice What `payout` reports for a clone it could not pay out (the token refused a transfer).
    uint256 public constant FAILED = type(uint256).max;
    /// @notice The account flag that says a clone has code already, so `payout` does not create it.
    uint256 public constant DEPLOYED = 1 << 255;
    /// @dev Comfortably above one clone's creation and payout (~90k at worst: first-time balances).
    uint256 private constant PAYOUT_GAS = 180_000;
    /// @dev Enough for a clone's creation (~41k), and all that a creation onto existing code can burn.
    uint256 private constant CREATE_GAS = 60_000;
    uint256 private constant ADDRESS_MASK = (1 << 160) - 1;

    /// @notice A factory function called through a clone, or a clone function called on the factory.
    error WrongContext();
    /// @notice The charge, merchant and fee given are not the ones this clone's address was made for.
    error NotThisClone();
    error FeeTooHigh(uint256 feeBps);
    error OddEntries();
    error OutOfGas();
    error TransferFailed(address token, address to);

    constructor(address feeRecipient_) {
        feeRecipient = feeRecipient_;
        factory = address(this);
        cloneCodeHash = keccak256(_creationCode());
    }

    /// @notice Takes the native coin: a clone's money, or fees the fee recipient would not accept.
    receive() external payable {}

    // ------------------------------------------------------------------------------------ the factory

    /// @notice The address of the clone for (charge, merchant, feeBps), deployed or not.
    function predict(bytes32 charge, address merchant, uint16 feeBps) external view returns (address clone) {
        (, clone) = _cloneOf(charge, merchant, feeBps);
    }

    /// @notice Deploys the clone for (charge, merchant, feeBps) unless it exists; returns its address.
    function deploy(bytes32 charge, address merchant, uint16 feeBps) external returns (address clone) {
        _onFactory();
        if (feeBps > 10_000) revert FeeTooHigh(feeBps);
        bytes32 salt;
        (salt, clone) = _cloneOf(charge, merchant, feeBps);
        // Checked first: CREATE2 onto existing code would burn all the gas it was given.
        if (clone.code.length == 0) _create2(salt);
        if (clone.code.length == 0) revert OutOfGas();
    }

    /// @notice Pays out `token` from the clones of many charges, deploying each that has no code yet.
    /// `entries` holds two words per clone: the charge, then merchant | feeBps << 160 | amount << 176
    /// | deployed << 255. `amount` of the clone's balance is paid out (0: all of it); `deployed` says
    /// the clone has code already (a wrong flag costs gas, never money: a clone that is not there pays
    /// nothing). A clone that cannot pay (it holds less, or the token refuses a transfer) is skipped,
    /// so it cannot hold up the others.
    /// @return paid What left each clone (net + fee): 0 for an empty one, FAILED for one skipped.
    function payout(address token, uint256[] calldata entries) external returns (uint256[] memory paid) {
        return _payout(token, false, entries);
    }

    /// @notice `payout` for the native coin (the amounts are ignored: a clone pays all it holds).
    function payoutNative(uint256[] calldata entries) external returns (uint256[] memory paid) {
        return _payout(address(0), true, entries);
    }

    /// @notice Sends all the fees this factory holds of `token` (address 0: the native coin) to the fee recipient.
    function withdrawFees(address token) external returns (uint256 amount) {
        _onFactory();
        amount = token == address(0) ? address(this).balance : IERC20Balance(token).balanceOf(address(this));
        if (!_send(token, feeRecipient, amount)) revert TransferFailed(token, feeRecipient);
    }

    /// @notice Creates a clone under `salt`: only this factory calls it, on itself, with CREATE_GAS
    /// (so a clone someone deployed first costs a batch that much, not the whole transaction).
    function create(bytes32 salt) external {
        _onFactory();
        if (msg.sender != factory) revert WrongContext();
        _create2(salt);
    }

    // ------------------------------------------------------------------------- a clone (its proxy)

    /// @notice Pays this clone's whole balance of `token`: the rest to the merchant, the fee to the fee
    /// recipient (or to the factory for it). A zero balance is a no-op.
    function flush(address token, bytes32 charge, address merchant, uint16 feeBps) external returns (uint256 net, uint256 fee) {
        return _flush(token, charge, merchant, feeBps, IERC20Balance(token).balanceOf(address(this)));
    }

    /// @notice Pays `amount` of this clone's balance of `token`, split as `flush` splits it.
    function flushAmount(address token, bytes32 charge, address merchant, uint16 feeBps, uint256 amount) external returns (uint256 net, uint256 fee) {
        return _flush(token, charge, merchant, feeBps, amount);
    }

    /// @notice `flush` for the native coin.
    function flushNative(bytes32 charge, address merchant, uint16 feeBps) external returns (uint256 net, uint256 fee) {
        return _flush(address(0), charge, merchant, feeBps, address(this).balance);
    }

    // ------------------------------------------------------------------------------------ internals

    function _payout(address token, bool native, uint256[] calldata entries) private returns (uint256[] memory paid) {
        _onFactory();
        if (entries.length % 2 != 0) revert OddEntries();
        uint256 n = entries.length / 2;
        paid = new uint256[](n);
        for (uint256 i; i < n; ++i) {
            // Each clone starts with more gas than it can need, so a skip is the token's refusal and
            // never a gas limit cut short (estimation would otherwise find one that skips the last).
            if (gasleft() < PAYOUT_GAS) revert OutOfGas();
            paid[i] = _payOne(token, native, bytes32(entries[2 * i]), entries[2 * i + 1]);
        }
    }

    /// @dev Deploys one clone if needed and has it pay out; what left it, or FAILED.
    function _payOne(address token, bool native, bytes32 charge, uint256 account) private returns (uint256 paid) {
        address merchant = address(uint160(account));
        uint16 feeBps = uint16(account >> 160);
        uint256 amount = (account & ~DEPLOYED) >> 176;
        if (feeBps > 10_000) revert FeeTooHigh(feeBps);
        (bytes32 salt, address clone) = _cloneOf(charge, merchant, feeBps);
        bytes4 createSelector = this.create.selector;
        bytes4 selector = native ? this.flushNative.selector : amount == 0 ? this.flush.selector : this.flushAmount.selector;
        // The call is written in free memory without moving its pointer.
        assembly ("memory-safe") {
            // Types narrower than a word may carry dirty high bits in assembly: clean what is written.
            merchant := and(merchant, ADDRESS_MASK)
            feeBps := and(feeBps, 0xffff)
            let p := mload(0x40)
            if iszero(and(account, DEPLOYED)) {
                // this.create(salt) with CREATE_GAS; a clone that was there already is just as good.
                mstore(p, createSelector)
                mstore(add(p, 0x04), salt)
                pop(call(CREATE_GAS, address(), 0, p, 0x24, 0, 0))
            }
            mstore(p, selector)
            let size := 0xa4
            switch native
            case 0 {
                // flushAmount(token, charge, merchant, feeBps, amount); flush ignores the amount.
                mstore(add(p, 0x04), token)
                mstore(add(p, 0x24), charge)
                mstore(add(p, 0x44), merchant)
                mstore(add(p, 0x64), feeBps)
                mstore(add(p, 0x84), amount)
            }
            default {
                // flushNative(charge, merchant, feeBps)
                mstore(add(p, 0x04), charge)
                mstore(add(p, 0x24), merchant)
                mstore(add(p, 0x44), feeBps)
                size := 0x64
            }
            // A clone pays all or nothing: a refusal reverts its whole flush, never half of it. No
            // answer at all means the clone is not there (a wrong `deployed` flag).
            let ok := call(gas(), clone, 0, p, size, 0, 0x40)
            switch and(ok, eq(returndatasize(), 0x40))
            case 0 {
                paid := not(0) // FAILED
            }
            default {
                paid := add(mload(0), mload(0x20))
            }
        }
    }

    function _flush(address token, bytes32 charge, address merchant, uint16 feeBps, uint256 amount) private returns (uint256 net, uint256 fee) {
        if (address(this) == factory) revert WrongContext();
        // The factory has just derived this address from the same arguments; anyone else is checked.
        if (msg.sender != factory) {
            (, address clone) = _cloneOf(charge, merchant, feeBps);
            if (clone != address(this)) revert NotThisClone();
        }
        if (amount == 0) return (0, 0);
        fee = (amount * feeBps) / 10_000;
        net = amount - fee;
        if (net != 0 && !_send(token, merchant, net)) revert TransferFailed(token, merchant);
        if (fee != 0 && !_send(token, feeRecipient, fee) && !_send(token, factory, fee)) revert TransferFailed(token, factory);
    }

    /// @dev Sends `amount` of `token` (0: the native coin); false on a refusal. Accepts tokens that
    /// return nothing. The token call is written in free memory without moving its pointer.
    function _send(address token, address to, uint256 amount) private returns (bool ok) {
        if (token == address(0)) {
            (ok, ) = to.call{value: amount}("");
            return ok;
        }
        assembly ("memory-safe") {
            let p := mload(0x40)
            mstore(p, shl(224, 0xa9059cbb)) // transfer(address,uint256)
            mstore(add(p, 0x04), and(to, ADDRESS_MASK))
            mstore(add(p, 0x24), amount)
            ok := call(gas(), token, 0, p, 0x44, 0, 0x20)
            // true, or nothing from a contract; anything else (false, a revert, no code) refuses.
            switch returndatasize()
            case 0 {
                ok := and(ok, gt(extcodesize(token), 0))
            }
            default {
                ok := and(ok, and(eq(returndatasize(), 0x20), eq(mload(0), 1)))
            }
        }
    }

    /// @dev The CREATE2 salt and the address of the clone for (charge, merchant, feeBps).
    function _cloneOf(bytes32 charge, address merchant, uint16 feeBps) private view returns (bytes32 salt, address clone) {
        address f = factory;
        bytes32 codeHash = cloneCodeHash;
        assembly ("memory-safe") {
            // salt = keccak256(abi.encode(charge, merchant, feeBps)), then
            // keccak256(0xff ++ factory ++ salt ++ codeHash): both in free memory, its pointer unmoved.
            let p := mload(0x40)
            mstore(p, charge)
            mstore(add(p, 0x20), and(merchant, ADDRESS_MASK))
            mstore(add(p, 0x40), and(feeBps, 0xffff))
            salt := keccak256(p, 0x60)
            mstore(p, f)
            mstore8(add(p, 0x0b), 0xff)
            mstore(add(p, 0x20), salt)
            mstore(add(p, 0x40), codeHash)
            clone := and(keccak256(add(p, 0x0b), 0x55), ADDRESS_MASK)
        }
    }

    function _create2(bytes32 salt) private {
        address f = factory;
        assembly ("memory-safe") {
            // _creationCode(), written in free memory without moving its pointer (53 bytes).
            let p := mload(0x40)
            mstore(p, 0x602c8060095f395ff3365f5f375f5f365f730000000000000000000000000000)
            mstore(add(p, 0x12), shl(96, f))
            mstore(add(p, 0x26), 0x5af43d5f5f3e5f3d91602a57fd5bf30000000000000000000000000000000000)
            pop(create2(0, p, 0x35, salt))
        }
    }

    function _onFactory() private view {
        if (address(this) != factory) revert WrongContext();
    }

    /// @dev A clone's creation code: a 9-byte constructor returning the 44-byte ERC-7511 minimal proxy
    /// (EIP-1167 with PUSH0) of this factory.
    function _creationCode() private view returns (bytes memory) {
        return abi.encodePacked(hex"602c8060095f395ff3365f5f375f5f365f73", factory, hex"5af43d5f5f3e5f3d91602a57fd5bf3");
    }
}

interface IERC20Balance {
    function balanceOf(address account) external view returns (uint256);
}
