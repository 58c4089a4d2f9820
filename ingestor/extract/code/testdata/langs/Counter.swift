import Foundation

/// Counts things.
struct Counter {
    private(set) var count = 0

    mutating func increment() {
        count += 1
    }

    init(start: Int) {
        count = start
    }
}

extension Counter: CustomStringConvertible {
    var description: String { "\(count)" }
}

@MainActor
final class ViewModel {
    func load() async throws {
        let text = """
func fake() {}
"""
        print(text)
    }
}

func main() {
    print(Counter(start: 1))
}
