import Testing
@testable import DuckPromptService

/// `RouteAnnouncement`: which listings of the route watch `RouteChanged` says.
struct RouteAnnouncementTests {
    /// A run of listings (`nil`: the service begins to serve calls) and, per listing, whether it is said.
    static let table: [(name: String, steps: [String?], said: [Bool])] = [
        ("the first listing before serving is the baseline", ["speaker", nil, "speaker"], [false, false]),
        ("a change after serving is said", ["speaker", nil, "bt"], [false, true]),
        ("a change before serving is not said (Route() shows it)", ["speaker", "bt", nil, "bt"], [false, false, false]),
        ("the first listing after serving is said (the server was slow)", [nil, "bt"], [true]),
        ("the first listing after serving is said even with no sink", [nil, ""], [true]),
        ("no sink, then a sink", ["", nil, "speaker", "speaker"], [false, true, false]),
        ("back and forth", ["speaker", nil, "bt", "speaker", "speaker"], [false, true, true, false]),
        ("the route lost: said as none", ["bt", nil, ""], [false, true]),
    ]

    @Test("RouteChanged says a listing when, and only when, a listener could not know it", arguments: table.indices)
    func listings(_ index: Int) {
        let row = Self.table[index]
        var announcement = RouteAnnouncement()
        var said: [Bool] = []
        for step in row.steps {
            if let sink = step { said.append(announcement.listed(sink)) } else { announcement.startServing() }
        }
        #expect(said == row.said, "\(row.name)")
        #expect(announcement.last == row.steps.compactMap { $0 }.last)
    }
}
