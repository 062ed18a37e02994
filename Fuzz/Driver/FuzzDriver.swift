import FolioFuzzTargets
import Foundation

// `folio-fuzz`: the libFuzzer entry point of every fuzz target, chosen by FOLIO_FUZZ_TARGET.
// Built by `make fuzz` with -DFUZZING and `-sanitize=fuzzer,address`; in the normal build it
// replays files through a target instead (`folio-fuzz <target> FILE...`), with no libFuzzer.

#if FUZZING
    /// The target FOLIO_FUZZ_TARGET names (checked once, before the first input).
    private let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["FOLIO_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTargets.named(name) else {
            let names = FuzzTargets.all.map(\.name).joined(separator: ", ")
            FileHandle.standardError.write(Data("folio-fuzz: set FOLIO_FUZZ_TARGET to one of: \(names)\n".utf8))
            exit(2)
        }
        return target
    }()

    @_cdecl("LLVMFuzzerInitialize")
    public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>) -> CInt {
        _ = selected
        return 0
    }

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        selected.run(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }

    @_silgen_name("LLVMFuzzerRunDriver")
    private func runDriver(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// SwiftPM links an executable with `main` renamed from this module's entry point, while
    /// libFuzzer brings a `main` of its own (the fuzz build links with
    /// --allow-multiple-definition). Whichever the linker keeps, libFuzzer runs the target.
    @main
    struct FolioFuzz {
        static func main() {
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(runDriver(&argc, &argv, fuzzOneInput))
        }
    }
#else
    @main
    struct FolioFuzz {
        static func main() {
            let args = Array(CommandLine.arguments.dropFirst())
            guard let name = args.first, name != "--help", name != "-h" else {
                print("usage: folio-fuzz TARGET FILE...   (replays inputs through a fuzz target)\n       folio-fuzz --list")
                exit(args.isEmpty ? 2 : 0)
            }
            if name == "--list" {
                for target in FuzzTargets.all { print("\(target.name)\t\(target.summary)") }
                return
            }
            guard let target = FuzzTargets.named(name) else {
                FileHandle.standardError.write(Data("folio-fuzz: no target \"\(name)\" (see --list)\n".utf8))
                exit(2)
            }
            for path in args.dropFirst() {
                guard let data = FileManager.default.contents(atPath: path) else {
                    FileHandle.standardError.write(Data("folio-fuzz: cannot read \(path)\n".utf8))
                    exit(2)
                }
                target([UInt8](data))
                print("ok \(path)")
            }
        }
    }
#endif
