import CSystemd
import Glibc

/// A failed sd-bus call: its negative errno (sd-bus's convention), and what was being done.
package struct BusError: Error, CustomStringConvertible {
    package var errno: Int32
    package var what: String
    package var description: String { "\(what): \(String(cString: strerror(-errno)))" }
}

/// Throws for a negative sd-bus result; returns a non-negative one.
@discardableResult
package func check(_ result: Int32, _ what: @autoclosure () -> String) throws -> Int32 {
    guard result >= 0 else { throw BusError(errno: result, what: what()) }
    return result
}

/// The arguments of one message, read in order: a method call given to the service's handler
/// (sd-bus checked its signature against the vtable, Sources/CBusObject, before it reached
/// us), or a reply or signal the library's `SessionBusClient` reads (MPRIS players; the
/// bench's calls to the service and its `PromptFinished`). Valid only while its owner holds
/// the message (for a call: inside the handler; for a signal: inside its handler).
/// sd-bus: `sd_bus_message_read_basic`, `sd_bus_message_enter_container`,
/// `sd_bus_message_exit_container`, `sd_bus_message_peek_type`, `sd_bus_message_get_sender`.
package struct BusReader {
    package let message: OpaquePointer

    package init(message: OpaquePointer) { self.message = message }

    /// The unique bus name of the sender (`:1.42`).
    package var sender: String { sd_bus_message_get_sender(message).map { String(cString: $0) } ?? "" }

    /// The object path a signal came from. sd-bus: `sd_bus_message_get_path`.
    package var path: String { sd_bus_message_get_path(message).map { String(cString: $0) } ?? "" }

    /// A signal's interface. sd-bus: `sd_bus_message_get_interface`.
    package var interface: String { sd_bus_message_get_interface(message).map { String(cString: $0) } ?? "" }

    /// A signal's name. sd-bus: `sd_bus_message_get_member`.
    package var member: String { sd_bus_message_get_member(message).map { String(cString: $0) } ?? "" }

    package func readString() throws -> String {
        var value: UnsafePointer<CChar>? = nil
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &value), "reading a string")
        return value.map { String(cString: $0) } ?? ""
    }

    package func readUInt64() throws -> UInt64 {
        var value: UInt64 = 0
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "t")), &value), "reading a uint64")
        return value
    }

    package func readUInt32() throws -> UInt32 {
        var value: UInt32 = 0
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "u")), &value), "reading a uint32")
        return value
    }

    package func readInt32() throws -> Int32 {
        var value: Int32 = 0
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "i")), &value), "reading an int32")
        return value
    }

    /// An object path (`o`).
    package func readObjectPath() throws -> String {
        var value: UnsafePointer<CChar>? = nil
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "o")), &value), "reading an object path")
        return value.map { String(cString: $0) } ?? ""
    }

    /// An `ao`.
    package func readObjectPaths() throws -> [String] {
        try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "o"), "reading ao")
        var paths: [String] = []
        while try !atEnd() { paths.append(try readObjectPath()) }
        try check(sd_bus_message_exit_container(message), "reading ao")
        return paths
    }

    /// `org.freedesktop.DBus.ObjectManager.GetManagedObjects`'s `a{oa{sa{sv}}}`: each object's
    /// interfaces and their properties, as `readProperties` keeps them.
    /// - Throws: `BusError` when the message is not one.
    package func readManagedObjects() throws -> [String: [String: [String: BusValue]]] {
        try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "{oa{sa{sv}}}"), "reading a{oa{sa{sv}}}")
        var objects: [String: [String: [String: BusValue]]] = [:]
        while try !atEnd() {
            try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), "oa{sa{sv}}"), "reading a{oa{sa{sv}}}")
            let path = try readObjectPath()
            try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "{sa{sv}}"), "reading \(path)")
            var interfaces: [String: [String: BusValue]] = [:]
            while try !atEnd() {
                try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), "sa{sv}"), "reading \(path)")
                let interface = try readString()
                interfaces[interface] = try readProperties()
                try check(sd_bus_message_exit_container(message), "reading \(path)")
            }
            try check(sd_bus_message_exit_container(message), "reading \(path)")
            try check(sd_bus_message_exit_container(message), "reading a{oa{sa{sv}}}")
            objects[path] = interfaces
        }
        try check(sd_bus_message_exit_container(message), "reading a{oa{sa{sv}}}")
        return objects
    }

    /// oFono's list of objects with their properties (`org.ofono.Manager.GetModems`,
    /// `org.ofono.VoiceCallManager.GetCalls`): an `a(oa{sv})`, or the `a{oa{sv}}` PipeWire's
    /// oFono stand-in answers (its `bluez5.telephony.provide-ofono`), in the order sent.
    /// - Throws: `BusError` when the message is neither.
    package func readObjectsWithProperties() throws -> [(path: String, properties: [String: BusValue])] {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>? = nil
        try check(sd_bus_message_peek_type(message, &type, &contents), "reading a(oa{sv})")
        let signature = contents.map { String(cString: $0) } ?? ""
        guard type == CChar(UInt8(ascii: "a")), signature == "(oa{sv})" || signature == "{oa{sv}}" else {
            throw BusError(errno: -EBADMSG, what: "reading a(oa{sv}) (found a\(signature))")
        }
        let entry = CChar(UInt8(ascii: signature.hasPrefix("(") ? "r" : "e"))
        try check(sd_bus_message_enter_container(message, type, signature), "reading a(oa{sv})")
        var objects: [(path: String, properties: [String: BusValue])] = []
        while try !atEnd() {
            try check(sd_bus_message_enter_container(message, entry, "oa{sv}"), "reading a(oa{sv})")
            let path = try readObjectPath()
            objects.append((path, try readProperties()))
            try check(sd_bus_message_exit_container(message), "reading a(oa{sv})")
        }
        try check(sd_bus_message_exit_container(message), "reading a(oa{sv})")
        return objects
    }

    package func readBool() throws -> Bool {
        var value: Int32 = 0
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &value), "reading a boolean")
        return value != 0
    }

    /// A passed descriptor, duplicated (close-on-exec): the message closes its own.
    package func readDescriptor() throws -> Int32 {
        var fd: Int32 = -1
        // A handle whose index names no descriptor passed with the call is the caller's mistake.
        guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "h")), &fd) >= 0 else {
            throw DuckPromptError(.usage, "the handle names no descriptor passed with the call (pass the open file with it)")
        }
        do throws(Errno) { return try POSIX.fcntl(fd, F_DUPFD_CLOEXEC, 3) } catch {
            throw BusError(errno: -error.rawValue, what: "duplicating the passed descriptor")
        }
    }

    package func readStrings() throws -> [String] {
        try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "s"), "reading as")
        var strings: [String] = []
        while try !atEnd() { strings.append(try readString()) }
        try check(sd_bus_message_exit_container(message), "reading as")
        return strings
    }

    /// An `a{sv}`, each value one of `BusValue`'s types.
    /// - Throws: `BusValueTypeError` for a value of another type (the service answers it with
    ///   a Usage error naming the key); `BusError` when the message cannot be read.
    package func readOptions() throws -> [String: BusValue] {
        try readDictionary { key, signature in
            guard let value = try readVariantContents(signature) else {
                throw BusValueTypeError(key: key, signature: signature)
            }
            return value
        }
    }

    /// An `a{sv}` of another program's properties (`org.freedesktop.DBus.Properties.GetAll`,
    /// an MPRIS player's `Metadata`): values of `BusValue`'s types are kept, an object path
    /// (`o`) as a string, a list of them (`ao`) as strings and a nested `a{sv}` as a
    /// dictionary; any other value is skipped
    /// (`sd_bus_message_skip`), not refused.
    /// - Throws: `BusError` when the message is not an `a{sv}`.
    package func readProperties() throws -> [String: BusValue] {
        try readDictionary { key, signature in
            switch signature {
            case "o":
                var value: UnsafePointer<CChar>? = nil
                try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "o")), &value), "reading \(key)")
                return .string(value.map { String(cString: $0) } ?? "")
            case "ao":
                return .strings(try readObjectPaths())
            case "a{sv}":
                return .dictionary(try readProperties())
            default:
                if let value = try readVariantContents(signature) { return value }
                try check(sd_bus_message_skip(message, signature), "skipping \(key)")
                return nil
            }
        }
    }

    /// An `a{sv}`: each entry's variant read by `value(key, signature)` (nil: left out).
    private func readDictionary(_ value: (String, String) throws -> BusValue?) throws -> [String: BusValue] {
        try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "{sv}"), "reading a{sv}")
        var entries: [String: BusValue] = [:]
        while try !atEnd() {
            try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), "sv"), "reading a{sv}")
            let key = try readString()
            var type: CChar = 0
            var contents: UnsafePointer<CChar>? = nil
            try check(sd_bus_message_peek_type(message, &type, &contents), "reading \(key)")
            let signature = contents.map { String(cString: $0) } ?? ""
            try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "v")), signature), "reading \(key)")
            entries[key] = try value(key, signature)
            try check(sd_bus_message_exit_container(message), "reading \(key)")
            try check(sd_bus_message_exit_container(message), "reading \(key)")
        }
        try check(sd_bus_message_exit_container(message), "reading a{sv}")
        return entries
    }

    /// A variant's value (`Properties.Get`), as `readProperties` keeps it; nil for a type it
    /// skips.
    package func readVariant() throws -> BusValue? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>? = nil
        try check(sd_bus_message_peek_type(message, &type, &contents), "reading a variant")
        let signature = contents.map { String(cString: $0) } ?? ""
        try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "v")), signature), "reading a variant")
        let value: BusValue?
        if let known = try readVariantContents(signature) {
            value = known
        } else {
            try check(sd_bus_message_skip(message, signature), "skipping a variant")
            value = nil
        }
        try check(sd_bus_message_exit_container(message), "reading a variant")
        return value
    }

    private func readVariantContents(_ signature: String) throws -> BusValue? {
        func basic<T: BitwiseCopyable>(_ type: Character, _ initial: T) throws -> T {
            var value = initial
            try check(sd_bus_message_read_basic(message, CChar(type.asciiValue!), &value), "reading \(type)")
            return value
        }
        switch signature {
        case "s": return .string(try readString())
        case "d": return .double(try basic("d", 0.0))
        case "u": return .uint32(try basic("u", UInt32(0)))
        case "i": return .int32(try basic("i", Int32(0)))
        case "t": return .uint64(try basic("t", UInt64(0)))
        case "x": return .int64(try basic("x", Int64(0)))
        case "b": return .bool(try basic("b", Int32(0)) != 0)
        case "as": return .strings(try readStrings())
        case "a{ss}":
            try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "{ss}"), "reading a{ss}")
            var map: [String: String] = [:]
            while try !atEnd() {
                try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), "ss"), "reading a{ss}")
                let key = try readString()
                map[key] = try readString()
                try check(sd_bus_message_exit_container(message), "reading a{ss}")
            }
            try check(sd_bus_message_exit_container(message), "reading a{ss}")
            return .stringMap(map)
        default:
            return nil
        }
    }

    private func atEnd() throws -> Bool {
        try check(sd_bus_message_at_end(message, 0), "reading the call") > 0
    }
}

/// An option whose value has a type the service does not take.
package struct BusValueTypeError: Error {
    package var key: String
    package var signature: String
}

/// A message being written: a method return or a signal of the service, or a call of the
/// library's `SessionBusClient` (the bench's too). sd-bus: `sd_bus_message_append_basic`, `sd_bus_message_open_container`,
/// `sd_bus_message_close_container`.
package struct BusWriter {
    package let message: OpaquePointer

    package init(message: OpaquePointer) { self.message = message }

    package func append(_ value: BusValue) throws {
        func basic<T: BitwiseCopyable>(_ type: Character, _ value: T) throws {
            var value = value
            try check(sd_bus_message_append_basic(message, CChar(type.asciiValue!), &value), "writing \(type)")
        }
        switch value {
        case .string(let s): _ = try s.withCString { try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0), "writing s") }
        case .double(let d): try basic("d", d)
        case .uint32(let u): try basic("u", u)
        case .int32(let i): try basic("i", i)
        case .uint64(let t): try basic("t", t)
        case .int64(let x): try basic("x", x)
        case .bool(let b): try basic("b", Int32(b ? 1 : 0))
        case .strings(let list):
            try container("a", "s") { for s in list { try append(.string(s)) } }
        case .uint32s(let list):
            try container("a", "u") { for u in list { try append(.uint32(u)) } }
        case .stringMap(let map):
            try container("a", "{ss}") {
                for (k, v) in map.sorted(by: { $0.key < $1.key }) {
                    try container("e", "ss") { try append(.string(k)); try append(.string(v)) }
                }
            }
        case .dictionary(let dict):
            try container("a", "{sv}") {
                for (k, v) in dict.sorted(by: { $0.key < $1.key }) {
                    try container("e", "sv") {
                        try append(.string(k))
                        try container("v", v.signature) { try append(v) }
                    }
                }
            }
        case .dictionaries(let list):
            try container("a", "a{sv}") { for d in list { try append(.dictionary(d)) } }
        }
    }

    /// A descriptor passed with the message (`h`): sd-bus duplicates it, so the caller keeps
    /// and closes its own.
    package func appendDescriptor(_ fd: Int32) throws {
        var value = fd
        try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "h")), &value), "writing h")
    }

    private func container(_ type: Character, _ contents: String, _ body: () throws -> Void) throws {
        try check(sd_bus_message_open_container(message, CChar(type.asciiValue!), contents), "writing \(type)\(contents)")
        try body()
        try check(sd_bus_message_close_container(message), "writing \(type)\(contents)")
    }
}
