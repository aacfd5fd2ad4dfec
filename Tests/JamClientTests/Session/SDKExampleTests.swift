import Foundation
import JamClient
import JamTestSupport
import Testing

/// The README's SDK example is `Examples/SDKExample`, which every build compiles; this
/// keeps the README's copy identical to it.
@Suite struct SDKExampleTests {
    @Test("the README shows the compiled example line for line")
    func theReadmeShowsTheCompiledExampleLineForLine() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let example = try String(contentsOf: root.appendingPathComponent("Examples/SDKExample/main.swift"), encoding: .utf8)
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let begin = try #require(example.range(of: "// README: begin\n"))
        let end = try #require(example.range(of: "// README: end"))
        let shown = example[begin.upperBound..<end.lowerBound]
        #expect(shown.contains("Participant("))
        #expect(readme.contains("```swift\nimport JamClient\n\n" + shown + "```"), "README.md's SDK example differs from Examples/SDKExample/main.swift")
    }
}
