import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// The queue's rules (pure), and the ticket files that carry them between processes.
struct QueuePolicyTests {
    typealias Q = QueuedPrompt

    @Test("notification: dropped when anything plays or waits, played when alone")
    func notification() {
        #expect(QueuePolicy.arrive(.notification, into: []) == .enqueue(interrupt: [], replace: []))
        for other in PromptPriority.allCases {
            for playing in [true, false] {
                guard case .drop(let reason) = QueuePolicy.arrive(.notification, into: [Q(seq: 1, priority: other, playing: playing)]) else {
                    Issue.record("notification not dropped beside a \(playing ? "playing" : "waiting") \(other)")
                    continue
                }
                #expect(reason.contains("notification"))
            }
        }
    }

    @Test("message and important interrupt a playing text, notification or progress, not each other",
          arguments: PromptPriority.allCases)
    func interruption(playing: PromptPriority) {
        let queue = [Q(seq: 7, priority: playing, playing: true)]
        for newcomer in [PromptPriority.message, .important] {
            let expected: [UInt64] = [.text, .notification, .progress].contains(playing) ? [7] : []
            #expect(QueuePolicy.arrive(newcomer, into: queue) == .enqueue(interrupt: expected, replace: []),
                    "\(newcomer) over a playing \(playing)")
        }
        // text and progress never interrupt.
        for newcomer in [PromptPriority.text, .progress] {
            guard case .enqueue(let interrupt, _) = QueuePolicy.arrive(newcomer, into: queue) else {
                Issue.record("\(newcomer) dropped"); continue
            }
            #expect(interrupt.isEmpty, "\(newcomer) interrupted a playing \(playing)")
        }
    }

    @Test("a newer text replaces the waiting texts, a newer progress the waiting progress; never the playing one")
    func replacement() {
        let queue = [Q(seq: 1, priority: .text, playing: true), Q(seq: 2, priority: .text),
                     Q(seq: 3, priority: .progress), Q(seq: 4, priority: .message), Q(seq: 5, priority: .text)]
        #expect(QueuePolicy.arrive(.text, into: queue) == .enqueue(interrupt: [], replace: [2, 5]))
        #expect(QueuePolicy.arrive(.progress, into: queue) == .enqueue(interrupt: [], replace: [3]))
        #expect(QueuePolicy.arrive(.message, into: queue) == .enqueue(interrupt: [1], replace: []))
        #expect(QueuePolicy.arrive(.important, into: queue) == .enqueue(interrupt: [1], replace: []))
    }

    @Test("--on-busy drop: dropped when anything plays or waits")
    func onBusyDrop() {
        #expect(QueuePolicy.arrive(.message, into: [], onBusyDrop: true) == .enqueue(interrupt: [], replace: []))
        guard case .drop(let reason) = QueuePolicy.arrive(.important, into: [Q(seq: 1, priority: .text)], onBusyDrop: true) else {
            Issue.record("not dropped"); return
        }
        #expect(reason.contains("--on-busy drop"))
    }

    @Test("next: nothing while one plays; else lowest rank, then arrival")
    func next() {
        #expect(QueuePolicy.next(in: []) == nil)
        #expect(QueuePolicy.next(in: [Q(seq: 1, priority: .progress, playing: true), Q(seq: 2, priority: .important)]) == nil)
        let waiting = [Q(seq: 1, priority: .text), Q(seq: 2, priority: .message), Q(seq: 3, priority: .important),
                       Q(seq: 4, priority: .important), Q(seq: 5, priority: .progress)]
        #expect(QueuePolicy.next(in: waiting) == 3)
        #expect(QueuePolicy.next(in: Array(waiting.prefix(2))) == 2)
        #expect(QueuePolicy.next(in: [Q(seq: 9, priority: .progress), Q(seq: 8, priority: .notification)]) == 8)
    }

    @Test("ranks follow SSIP's order")
    func ranks() {
        #expect(PromptPriority.allCases.map(\.rank) == [0, 1, 2, 3, 4])
        #expect(PromptPriority(rawValue: "message") == .message)
    }
}

/// Ticket files in a private directory: several tickets of this process stand for prompts of
/// several processes (each holds its own open file and lock, as another process would).
struct PromptQueueTests {
    typealias Dir = TempRuntime

    @Test("a ticket leaving and a stop request ring every waiter; a dead waiter's bell is removed")
    func waitersRung() throws {
        let dir = try Dir()
        let directory = try RuntimeDirectory(runtimeDir: dir.path)
        let queue = PromptQueue(directory: directory)
        let bell = WaiterBell(in: directory)
        #expect(dir.files().contains { $0.hasPrefix("wait-\(getpid())-") && $0.hasSuffix(".bell") }, "\(dir.files())")
        let text = try queue.enter(priority: .text)
        let lock = try text.waitTurn(deadline: .now + .seconds(10))
        #expect(bell.wait(until: .now) == false, "entering or taking the turn rang")
        let message = try queue.enter(priority: .message)   // interrupts the text: a stop request
        #expect(text.stopRequest?.drop == .interrupted)
        #expect(bell.wait(until: .now + .seconds(10)), "the stop request did not ring")
        text.leave()
        #expect(bell.wait(until: .now + .seconds(10)), "leaving did not ring")
        lock.release()
        #expect(bell.wait(until: .now + .seconds(10)), "releasing the duck lock did not ring")
        message.leave()
        // The bell of a process that is gone (a pid no process has) goes at the next ring.
        let stale = "wait-\(Int32.max - 7)-1.bell"
        #expect(FileManager.default.createFile(atPath: dir.journalDir + "/" + stale, contents: nil))
        WaiterBell.ringAll(in: directory)
        #expect(!dir.files().contains(stale), "\(dir.files())")
    }

    @Test("first ticket plays at once; the next waits; a dead ticket's file is removed")
    func turns() throws {
        let dir = try Dir()
        let directory = try RuntimeDirectory(runtimeDir: dir.path)
        let queue = PromptQueue(directory: directory)
        let first = try queue.enter(priority: .message, name: "a.wav")
        let lock = try first.waitTurn(deadline: ContinuousClock.now + .seconds(1))
        #expect(lock.isHeld)
        let second = try queue.enter(priority: .message)
        #expect(throws: DuckPromptError.self) {
            _ = try second.waitTurn(deadline: ContinuousClock.now + .milliseconds(50), expireMs: 50)
        }
        #expect(!dir.files().contains("ticket-\(second.seq).json"), "an expired ticket stays: \(dir.files())")
        let records = try queue.withQueueLock { _ in try queue.liveTickets() }
        #expect(records.map(\.seq) == [first.seq] && records[0].playing && records[0].name == "a.wav")
        first.leave()
        lock.release()
        #expect(try queue.withQueueLock { _ in try queue.liveTickets() }.isEmpty)
        #expect(dir.files().filter { $0.hasPrefix("ticket-") }.isEmpty)
    }

    @Test("a ticket whose owner is gone (its file unlocked) is removed, and does not block the queue")
    func deadOwner() throws {
        let dir = try Dir()
        let directory = try RuntimeDirectory(runtimeDir: dir.path)
        // What a killed prompt leaves: a ticket file that no one holds a lock on.
        let stale = #"{"seq":41,"pid":999999,"priority":"important","playing":true,"name":"x"}"#
        _ = FileManager.default.createFile(atPath: dir.path + "/duckprompt/ticket-41.json", contents: Data(stale.utf8))
        _ = FileManager.default.createFile(atPath: dir.path + "/duckprompt/ticket-40.stop", contents: Data("x\n".utf8))
        let queue = PromptQueue(directory: directory)
        let ticket = try queue.enter(priority: .notification)
        let lock = try ticket.waitTurn(deadline: ContinuousClock.now + .seconds(1))
        #expect(lock.isHeld)
        #expect(!dir.files().contains("ticket-41.json") && !dir.files().contains("ticket-40.stop"), "\(dir.files())")
    }

    @Test("message interrupts a playing text; a newer text replaces the waiting one; notification dropped")
    func stopRequests() throws {
        let dir = try Dir()
        let directory = try RuntimeDirectory(runtimeDir: dir.path)
        let queue = PromptQueue(directory: directory)
        let text = try queue.enter(priority: .text)
        let lock = try text.waitTurn(deadline: nil)
        let waitingText = try queue.enter(priority: .text)
        #expect(text.stopRequest == nil && waitingText.stopRequest == nil)
        let newerText = try queue.enter(priority: .text)
        #expect(waitingText.stopRequest?.reason.contains("replaced by a newer text prompt") == true)
        #expect(waitingText.stopRequest?.drop == .replaced)
        #expect(newerText.stopRequest == nil && text.stopRequest == nil)
        do {
            _ = try waitingText.waitTurn(deadline: nil)
            Issue.record("a replaced prompt got its turn")
        } catch let error as DuckPromptError {
            #expect(error.code == .dropped && error.message.contains("replaced"))
        }
        #expect(throws: DuckPromptError.self) { _ = try queue.enter(priority: .notification) }
        let message = try queue.enter(priority: .message)
        #expect(text.stopRequest?.reason.contains("interrupted by a message prompt (pid \(getpid()))") == true)
        #expect(text.stopRequest?.drop == .interrupted)
        // The message goes before the waiting text once the text has left.
        text.leave()
        lock.release()
        let next = try message.waitTurn(deadline: ContinuousClock.now + .seconds(1))
        #expect(next.isHeld)
        #expect(newerText.stopRequest == nil)
    }

    @Test("an interrupting prompt rings the playing prompt's bell; leaving, and a dead owner, remove bells")
    func doorbell() throws {
        let dir = try Dir()
        let directory = try RuntimeDirectory(runtimeDir: dir.path)
        let queue = PromptQueue(directory: directory)
        let text = try queue.enter(priority: .text)
        let lock = try text.waitTurn(deadline: nil)
        let bell = try #require(text.doorbell)
        #expect(dir.files().contains("ticket-\(text.seq).bell"), "\(dir.files())")
        #expect(!bell.wait(timeoutMs: 0), "rang before anyone asked")
        let waiting = try queue.enter(priority: .text)
        #expect(!bell.wait(timeoutMs: 0), "a waiting text does not stop the playing one")
        let message = try queue.enter(priority: .message)
        #expect(bell.wait(timeoutMs: 0), "the interrupted prompt's bell did not ring")
        #expect(text.stopRequest?.reason.contains("interrupted by a message prompt") == true)
        #expect(!bell.wait(timeoutMs: 0), "a ring is read once")
        bell.wake()
        #expect(bell.wait(timeoutMs: 0), "wake() did not reach the waiter")
        text.leave()
        lock.release()
        #expect(!dir.files().contains("ticket-\(text.seq).bell"), "\(dir.files())")
        // What a killed prompt leaves: a bell without a ticket; and ringing a bell that is gone.
        #expect(mkfifo(dir.path + "/duckprompt/ticket-77.bell", 0o600) == 0)
        Doorbell.ring(in: directory, name: PromptQueue.bellName(78))
        _ = try queue.withQueueLock { _ in try queue.liveTickets() }
        #expect(!dir.files().contains("ticket-77.bell"), "\(dir.files())")
        waiting.leave()
        message.leave()
        #expect(dir.files().filter { $0.hasPrefix("ticket-") }.isEmpty, "\(dir.files())")
    }
}

/// The handover of an interrupted prompt's duck: the journal it leaves, and the plan that
/// adopts it.
struct HandoverTests {
    static func input(_ index: UInt32, _ volume: [UInt32], role: String = "music") -> SinkInput {
        SinkInput(index: index, sinkIndex: 0, volume: ChannelVolumes(volume),
                  properties: ["media.role": role, "application.name": "app\(index)"])
    }

    @Test("adopt: originals from the journal, current from the server, the handed-over gain; vanished or reused indices left out")
    func adopt() throws {
        let a = Self.input(1, [40000, 40000]), b = Self.input(2, [30000])
        var journal = DuckJournal(pid: 1, processStart: 1, depth: -20)
        journal.streams = [
            .init(index: 1, original: ChannelVolumes([60000, 60000]), key: RestoreKey(a)),
            .init(index: 2, original: ChannelVolumes([50000]), key: RestoreKey(mediaRole: "other")),  // index reused
            .init(index: 3, original: ChannelVolumes([50000]), key: RestoreKey(Self.input(3, [1]))),  // gone
        ]
        journal.ended = [.init(key: RestoreKey(mediaRole: "game"), original: ChannelVolumes([65536]))]
        journal.gain = -12
        var plan = DuckPlan(inputs: [a, b], depth: -20, math: .libpulse)
        plan.adopt(journal, live: [a, b])
        #expect(plan.gain == -12)
        #expect(plan.entries.map(\.index) == [1, 2])
        #expect(plan.entries[0].original == ChannelVolumes([60000, 60000]) && plan.entries[0].current == a.volume)
        #expect(plan.entries[1].original == b.volume, "a reused index kept the journal's original")
        // The ramp goes on from -12 dB; the release lands on the journal's originals and repairs
        // the ended stream's saved volume.
        let release = plan.release()
        #expect(release.contains(.setVolume(index: 1, volume: ChannelVolumes([60000, 60000]))))
        #expect(release.contains(.repairSaved(key: RestoreKey(mediaRole: "game"), volume: ChannelVolumes([65536]))))
    }

    @Test("the interrupted prompt's own stream (and a repair stream) is never ducked by the next prompt")
    func ownStreamsNotDucked() {
        let music = Self.input(1, [40000])
        let prompt = SinkInput(index: 2, sinkIndex: 0, volume: ChannelVolumes([65536]),
                               properties: ["media.role": "navigation", "duckprompt.prompt": "77"])
        let repair = SinkInput(index: 3, sinkIndex: 0, volume: ChannelVolumes([65536]),
                               properties: ["media.role": "music", "duckprompt.repair": "1"])
        var plan = DuckPlan(inputs: [music, prompt, repair], depth: -20, math: .libpulse)
        #expect(plan.entries.map(\.index) == [1])
        #expect(plan.appeared(prompt).isEmpty && plan.entries.map(\.index) == [1])
    }

    @Test("a prompt that does not duck adopts too, and ramps the streams back")
    func adoptWithoutDuck() {
        let a = Self.input(1, [6000])
        var journal = DuckJournal(pid: 1, processStart: 1, depth: -20)
        journal.streams = [.init(index: 1, original: ChannelVolumes([60000]), key: RestoreKey(a))]
        var plan = DuckPlan(inputs: [a], depth: 0, math: .libpulse)
        #expect(plan.entries.isEmpty)
        plan.adopt(journal, live: [a])
        #expect(plan.gain == -20 && plan.entries.count == 1)
        #expect(plan.apply(gain: 0) == [.setVolume(index: 1, volume: ChannelVolumes([60000]))])
    }

    @Test("the gain survives JSON, -inf included; journals without it read as nil")
    func gainCoding() throws {
        var journal = DuckJournal(pid: 5, processStart: 6, depth: -.infinity)
        #expect(try DuckJournal.decoded(from: journal.encoded()).gain == nil)
        journal.gain = -.infinity
        #expect(try DuckJournal.decoded(from: journal.encoded()).gain == -.infinity)
        journal.gain = -7.5
        #expect(try DuckJournal.decoded(from: journal.encoded()).gain == -7.5)
    }

    @Test("handOver renames the journal to handover.json; takeHandover reads it; reclaim takes it back")
    func files() throws {
        let dir = try PromptQueueTests.Dir()
        let store = try JournalStore(runtimeDir: dir.path)
        var journal = try DuckJournal.forCurrentProcess(plan: DuckPlan(inputs: [], depth: -20, math: .libpulse), server: nil, serverName: "t")
        journal.gain = -20
        try store.handOver(journal)
        #expect(try store.hasHandover && store.read() == nil)
        #expect(store.takeHandover()?.gain == -20)
        // A live owner's handover is not an orphan; its own process skips it too.
        #expect(try store.orphans().isEmpty)
        #expect(store.reclaimHandover())
        #expect(try !store.hasHandover && store.read() != nil)
        #expect(!store.reclaimHandover())
        try store.handOver(journal)
        store.removeHandover()
        #expect(!store.hasHandover && store.takeHandover() == nil)
    }

    @Test("a handover.json whose owner died is an orphan to restore")
    func deadHandover() throws {
        let dir = try PromptQueueTests.Dir()
        let store = try JournalStore(runtimeDir: dir.path)
        let dead = DuckJournal(pid: 999_999, processStart: 1, depth: -20, streams: [.init(index: 4, original: ChannelVolumes([1000]))])
        _ = FileManager.default.createFile(atPath: dir.path + "/duckprompt/handover.json", contents: try dead.encoded())
        let orphans = try store.orphans()
        #expect(orphans.map(\.path) == [dir.path + "/duckprompt/handover.json"])
        #expect(orphans.first?.journal.streams.first?.index == 4)
    }
}
