import FoundationEssentials

/// fnmatch-style patterns for sink names: `*` matches any run of characters (also none), `?`
/// one character, `\` makes the next character literal; everything else matches itself,
/// case-sensitively. No character classes, and `/` is an ordinary character.
package enum Glob {
    /// Whether `text` matches `pattern` as a whole.
    package static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern), t = Array(text)
        var pi = 0, ti = 0
        var starP = -1, starT = 0
        while ti < t.count {
            if pi < p.count {
                switch p[pi] {
                case "*":
                    starP = pi
                    starT = ti
                    pi += 1
                    continue
                case "?":
                    pi += 1
                    ti += 1
                    continue
                case "\\" where pi + 1 < p.count:
                    if p[pi + 1] == t[ti] {
                        pi += 2
                        ti += 1
                        continue
                    }
                default:
                    if p[pi] == t[ti] {
                        pi += 1
                        ti += 1
                        continue
                    }
                }
            }
            guard starP >= 0 else { return false }
            // Backtrack: let the last `*` swallow one more character.
            starT += 1
            ti = starT
            pi = starP + 1
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
