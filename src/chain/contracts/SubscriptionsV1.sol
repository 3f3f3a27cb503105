// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title SubscriptionsV1
/// @notice Recurring pulls from a payer's own wallet, capped by a spend permission the payer signed once.
///
/// A permission names everything a pull may do: who pays (`payer`), where the money goes (`merchant`,
/// less floor(amount * feeBps / 10000) to the fee recipient), the token, the most per period, the
/// period length in seconds, when it starts and ends, a salt (the subscription), and the one account
/// allowed to pull (`spender`: the service's relayer when the payer signed). Periods are fixed windows
/// [start + k * period, start + (k + 1) * period) by the chain's clock; a permission pulls at most once
/// in each (so at most `amount` in each), only in the window it is in, never before `start` nor from
/// `end` on. The payer gives this contract a token allowance (an EIP-2612 permit relayed with the
/// permission, or an approve) and can revoke the permission at any time; the spender can revoke it too
/// (the merchant cancelled).
///
/// A spender's key can be rotated without the payers signing again. Each spender named in permissions
/// has one controller: itself, until it delegates (`delegate`, signed by the current controller);
/// then the delegate, and only the delegate, pulls and revokes for every permission naming that
/// spender, and only the delegate can move the role on (to the next key). A rotated-away key, leaked
/// or not, has no power left over any permission.
///
/// Deployed through the deterministic deployment proxy with the same fee recipient, this contract has
/// the same address on every chain. No owner, no admin path, no upgrade; it never holds a payer's money
/// (a fee the fee recipient cannot take, e.g. blacklisted, is held here for it: `withdrawFees`).
contract SubscriptionsV1 {
    /// @notice What a payer signs (EIP-712, under this contract's domain).
    struct Permission {
        address payer;
        address merchant;
        address token;
        address spender;
        uint160 amount;
        uint16 feeBps;
        uint48 period;
        uint48 start;
        uint48 end;
        uint256 salt;
    }

    /// @notice Receives every fee (directly, or later through `withdrawFees`).
    address public immutable feeRecipient;

    bytes32 public constant PERMISSION_TYPEHASH = keccak256(
        "Permission(address payer,address merchant,address token,address spender,uint160 amount,uint16 feeBps,uint48 period,uint48 start,uint48 end,uint256 salt)"
    );
    bytes32 public constant DELEGATION_TYPEHASH = keccak256("Delegation(address spender,address delegate,uint256 nonce)");
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("Stablegate Subscriptions");
    bytes32 private constant VERSION_HASH = keccak256("1");
    /// @dev The shortest period a permission may have: one signature never allows pulls faster than daily.
    uint256 private constant MIN_PERIOD = 1 days;
    /// @dev ERC-1271's magic value: isValidSignature(bytes32,bytes).
    bytes4 private constant ERC1271_MAGIC = 0x1626ba7e;
    uint256 private constant HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    /// @dev A permission's state in one word that never returns to zero once approved, so a pull's
    /// write is always a cheap nonzero-to-nonzero one: bit 0 approved, bit 1 revoked, bits 8.. the
    /// first period that may still be pulled.
    mapping(bytes32 => uint256) private states;
    uint256 private constant APPROVED = 1;
    uint256 private constant REVOKED = 2;

    /// @notice The key that acts for a spender (its rotated successor), or address 0 (the spender itself).
    mapping(address => address) public delegateOf;
    /// @notice Delegations a spender has signed so far (each signature is used once, in order).
    mapping(address => uint256) public delegationNonce;

    event PermissionApproved(
        bytes32 indexed hash,
        address indexed payer,
        address indexed merchant,
        address token,
        address spender,
        uint256 amount,
        uint256 feeBps,
        uint256 period,
        uint256 start,
        uint256 end,
        uint256 salt
    );
    event Pulled(bytes32 indexed hash, address indexed payer, address indexed merchant, address token, uint256 periodIndex, uint256 net, uint256 fee, address feeTo);
    event Revoked(bytes32 indexed hash, address indexed by);
    event SpenderDelegated(address indexed spender, address indexed delegate);
    event FeesWithdrawn(address indexed token, uint256 amount);

    error NotApproved(bytes32 hash);
    error AlreadyRevoked(bytes32 hash);
    error BadSignature();
    error NotSpender(address caller);
    error NotPayerOrSpender(address caller);
    error OutsideWindow(uint256 time);
    error AlreadyPulled(uint256 periodIndex);
    error OverCap(uint256 amount, uint256 cap);
    error BadPermission();
    error ZeroAmount();
    error BadDelegate();
    error ZeroFeeRecipient();
    error TransferFailed(address token, address to);

    constructor(address feeRecipient_) {
        // USDC refuses transfers to address 0: every fee would be stuck here.
        if (feeRecipient_ == address(0)) revert ZeroFeeRecipient();
        feeRecipient = feeRecipient_;
    }

    // --------------------------------------------------------------------------------------- reads

    /// @notice The EIP-712 domain separator on this chain.
    function domainSeparator() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// @notice The EIP-712 struct hash of a permission: its identity everywhere (events, state).
    function hashPermission(Permission calldata p) public pure returns (bytes32) {
        return keccak256(abi.encode(PERMISSION_TYPEHASH, p));
    }

    /// @notice Who acts for `spender` now: its delegate, or the spender itself.
    function controllerOf(address spender) public view returns (address) {
        address d = delegateOf[spender];
        return d == address(0) ? spender : d;
    }

    /// @notice Where a permission stands: approved, revoked, and the first period it may still pull.
    function status(Permission calldata p) external view returns (bool approved, bool revoked, uint256 nextPeriod) {
        uint256 s = states[hashPermission(p)];
        return (s & APPROVED != 0, s & REVOKED != 0, s >> 8);
    }

    /// @notice The window `time` falls in (reverts outside the permission's life).
    function periodIndexAt(Permission calldata p, uint256 time) public pure returns (uint256) {
        if (time < p.start || time >= p.end) revert OutsideWindow(time);
        return (time - p.start) / p.period;
    }

    // ----------------------------------------------------------------------------------- the payer

    /// @notice Records a permission the payer signed (EIP-712; ERC-1271 for a contract wallet). Anyone
    /// may submit it; a second submission of an approved or revoked one changes nothing.
    function approve(Permission calldata p, bytes calldata signature) public returns (bytes32 hash) {
        if (
            p.period < MIN_PERIOD ||
            p.start >= p.end ||
            p.feeBps > 10_000 ||
            p.payer == address(0) ||
            p.merchant == address(0) ||
            p.merchant == address(this) ||
            p.token == address(0)
        ) revert BadPermission();
        hash = hashPermission(p);
        if (states[hash] != 0) return hash;
        if (!_validSignature(p.payer, _digest(hash), signature)) revert BadSignature();
        states[hash] = APPROVED;
        emit PermissionApproved(hash, p.payer, p.merchant, p.token, p.spender, p.amount, p.feeBps, p.period, p.start, p.end, p.salt);
    }

    /// @notice Ends a permission for good: the payer's own choice, or the spender's (the merchant cancelled).
    function revoke(Permission calldata p) external {
        if (msg.sender != p.payer && !_isSpender(p.spender, msg.sender)) revert NotPayerOrSpender(msg.sender);
        bytes32 hash = hashPermission(p);
        uint256 s = states[hash];
        if (s & REVOKED != 0) revert AlreadyRevoked(hash);
        // A permission revoked before it was ever submitted cannot be approved later either.
        states[hash] = s | APPROVED | REVOKED;
        emit Revoked(hash, msg.sender);
    }

    // --------------------------------------------------------------------------------- the spender

    /// @notice The checkout in one transaction: relays the payer's token permit (when given), records
    /// the permission and makes the first pull (when `amount` > 0). A permit someone already used (or
    /// an approve made instead) is not an error: the pull needs the allowance, not the permit.
    function subscribe(
        Permission calldata p,
        bytes calldata signature,
        uint256 permitValue,
        uint256 permitDeadline,
        bytes calldata permitSignature,
        uint160 amount
    ) external returns (uint256 net, uint256 fee) {
        if (permitSignature.length != 0) {
            // FiatToken v2.2's permit(owner, spender, value, deadline, bytes signature) (ERC-1271 too).
            (bool ok, ) = p.token.call(
                abi.encodeWithSelector(0x9fd5a6cf, p.payer, address(this), permitValue, permitDeadline, permitSignature)
            );
            ok; // checked by the pull's transferFrom
        }
        approve(p, signature);
        if (amount != 0) (net, fee) = pull(p, amount);
    }

    /// @notice Moves `amount` (at most the permission's cap) from the payer: floor(amount * feeBps /
    /// 10000) to the fee recipient (or, when it cannot take it, to this contract for it), the rest to
    /// the merchant. Only the spender's controller, once per window, never for nothing (an empty
    /// pull would only use the window up).
    function pull(Permission calldata p, uint160 amount) public returns (uint256 net, uint256 fee) {
        if (!_isSpender(p.spender, msg.sender)) revert NotSpender(msg.sender);
        if (amount == 0) revert ZeroAmount();
        if (amount > p.amount) revert OverCap(amount, p.amount);
        bytes32 hash = hashPermission(p);
        uint256 s = states[hash];
        if (s & APPROVED == 0) revert NotApproved(hash);
        if (s & REVOKED != 0) revert AlreadyRevoked(hash);
        uint256 index = periodIndexAt(p, block.timestamp);
        if (index < s >> 8) revert AlreadyPulled(index);
        states[hash] = ((index + 1) << 8) | APPROVED;

        fee = (uint256(amount) * p.feeBps) / 10_000;
        net = amount - fee;
        if (!_transferFrom(p.token, p.payer, p.merchant, net)) revert TransferFailed(p.token, p.merchant);
        address feeTo = feeRecipient;
        if (fee != 0 && !_transferFrom(p.token, p.payer, feeTo, fee)) {
            feeTo = address(this);
            if (!_transferFrom(p.token, p.payer, feeTo, fee)) revert TransferFailed(p.token, feeTo);
        }
        emit Pulled(hash, p.payer, p.merchant, p.token, index, net, fee, feeTo);
    }

    /// @notice Hands a spender's role to a new key: sent by the spender's controller, or relayed by
    /// anyone with the controller's EIP-712 signature of Delegation(spender, delegate, nonce) (so a
    /// rotated-away key needs no gas). The previous controller loses the role at once.
    function delegate(address spender, address delegate_, bytes calldata signature) external {
        if (delegate_ == address(0)) revert BadDelegate();
        address controller = controllerOf(spender);
        uint256 nonce = delegationNonce[spender];
        bytes32 hash = keccak256(abi.encode(DELEGATION_TYPEHASH, spender, delegate_, nonce));
        if (msg.sender != controller && !_validSignature(controller, _digest(hash), signature)) revert BadSignature();
        delegationNonce[spender] = nonce + 1;
        delegateOf[spender] = delegate_;
        emit SpenderDelegated(spender, delegate_);
    }

    /// @notice Sends all the fees this contract holds of `token` to the fee recipient.
    function withdrawFees(address token) external returns (uint256 amount) {
        amount = IERC20Balance(token).balanceOf(address(this));
        if (!_transfer(token, feeRecipient, amount)) revert TransferFailed(token, feeRecipient);
        emit FeesWithdrawn(token, amount);
    }

    // ------------------------------------------------------------------------------------ internals

    /// @dev Only the controller: once delegated, the spender's own key has no power left.
    function _isSpender(address spender, address caller) private view returns (bool) {
        return caller == controllerOf(spender);
    }

    function _digest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    /// @dev The signer's own key (ECDSA, 65 bytes, low s), else, for an account with code, ERC-1271. The
    /// key is tried first so that an EOA with EIP-7702 code still signs as itself; a contract wallet
    /// has no key whose signature recovers to its address.
    function _validSignature(address signer, bytes32 digest, bytes calldata signature) private view returns (bool) {
        if (_signedByKey(signer, digest, signature)) return true;
        if (signer.code.length == 0) return false;
        (bool ok, bytes memory ret) = signer.staticcall(abi.encodeWithSelector(ERC1271_MAGIC, digest, signature));
        return ok && ret.length >= 32 && abi.decode(ret, (bytes4)) == ERC1271_MAGIC;
    }

    function _signedByKey(address signer, bytes32 digest, bytes calldata signature) private pure returns (bool) {
        if (signature.length != 65) return false;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_ORDER || (v != 27 && v != 28)) return false;
        address recovered = ecrecover(digest, v, r, s);
        return recovered != address(0) && recovered == signer;
    }

    /// @dev transferFrom that refuses false, a revert, or a token without code.
    function _transferFrom(address token, address from, address to, uint256 amount) private returns (bool ok) {
        assembly ("memory-safe") {
            let q := mload(0x40)
            mstore(q, shl(224, 0x23b872dd)) // transferFrom(address,address,uint256)
            mstore(add(q, 0x04), from)
            mstore(add(q, 0x24), to)
            mstore(add(q, 0x44), amount)
            ok := call(gas(), token, 0, q, 0x64, 0, 0x20)
            switch returndatasize()
            case 0 {
                ok := and(ok, gt(extcodesize(token), 0))
            }
            default {
                ok := and(ok, and(eq(returndatasize(), 0x20), eq(mload(0), 1)))
            }
        }
    }

    function _transfer(address token, address to, uint256 amount) private returns (bool ok) {
        assembly ("memory-safe") {
            let q := mload(0x40)
            mstore(q, shl(224, 0xa9059cbb)) // transfer(address,uint256)
            mstore(add(q, 0x04), to)
            mstore(add(q, 0x24), amount)
            ok := call(gas(), token, 0, q, 0x44, 0, 0x20)
            switch returndatasize()
            case 0 {
                ok := and(ok, gt(extcodesize(token), 0))
            }
            default {
                ok := and(ok, and(eq(returndatasize(), 0x20), eq(mload(0), 1)))
            }
        }
    }
}

interface IERC20Balance {
    function balanceOf(address account) external view returns (uint256);
}
