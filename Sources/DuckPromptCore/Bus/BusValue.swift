/// A D-Bus value the service reads from an `a{sv}` or writes into one (the types its options
/// and `Devices()` use), or an MPRIS player's property. Pure.
package enum BusValue: Sendable, Equatable {
    /// `s`
    case string(String)
    /// `d`
    case double(Double)
    /// `u`
    case uint32(UInt32)
    /// `i`
    case int32(Int32)
    /// `t`
    case uint64(UInt64)
    /// `x`
    case int64(Int64)
    /// `b`
    case bool(Bool)
    /// `as`
    case strings([String])
    /// `au`
    case uint32s([UInt32])
    /// `a{ss}`
    case stringMap([String: String])
    /// `a{sv}`
    case dictionary([String: BusValue])
    /// `aa{sv}`
    case dictionaries([[String: BusValue]])

    /// The D-Bus signature of the value: what a wrong-type error names.
    package var signature: String {
        switch self {
        case .string: "s"
        case .double: "d"
        case .uint32: "u"
        case .int32: "i"
        case .uint64: "t"
        case .int64: "x"
        case .bool: "b"
        case .strings: "as"
        case .uint32s: "au"
        case .stringMap: "a{ss}"
        case .dictionary: "a{sv}"
        case .dictionaries: "aa{sv}"
        }
    }
}
