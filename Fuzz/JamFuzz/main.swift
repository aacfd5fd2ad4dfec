import CLibFuzzer
import Foundation

// One binary for every target, always linked with libFuzzer's driver; only `scripts/fuzz.sh`
// builds it with coverage and the address sanitizer. `JAM_FUZZ_TARGET` picks the target;
// given files instead of a corpus folder libFuzzer replays them, so
// `JAM_FUZZ_TARGET=byte-range jam-fuzz crash-…` reruns a finding.

let name = ProcessInfo.processInfo.environment["JAM_FUZZ_TARGET"] ?? ""
guard let target = FuzzTarget(rawValue: name) else {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    FileHandle.standardError.write(Data("set JAM_FUZZ_TARGET to one of: \(names) (got \"\(name)\")\n".utf8))
    exit(2)
}
nonisolated(unsafe) var selected = target

/// libFuzzer's callback (also the symbol its library expects to find).
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    selected.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in testOneInput(data, size) })
