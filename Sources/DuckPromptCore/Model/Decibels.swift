/// A gain in decibels. 0 dB leaves a volume as it is; -20 dB is a tenth of the amplitude.
public struct Decibels: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    public var value: Double
    public init(_ value: Double) { self.value = value }

    public var description: String {
        // Int(value) traps for infinities and beyond Int's range; print those as Double does.
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))dB" : "\(value)dB"
    }
}
