// Package archtest holds no code: its tests keep the rules of the
// README's layout.
//
// A package's folder says its role: internal/tools/... are build tools
// (run by make or by benchmarks), internal/testing/... and any package
// whose name ends in "test" (golden/goldentest) are test helpers, and
// every other package is runtime code. A runtime package imports no build
// tool and no test helper, directly or through another package; its
// _test.go files may. Tools and helpers may import each other and any
// runtime package.
//
// A plugin author depends on the SDK without the host: abi/sdk and the
// bundled plugins (plugins/<p>, plugins/<p>/wasm) reach only the standard
// library, abi, abi/sdk and plugins/..., for the host's platform and for
// wasip1.
//
// A public test helper (a test helper outside internal/: abi/sdk/sdktest,
// golden/goldentest), which a plugin author imports from another module,
// depends on nothing under internal/testing or internal/tools, and its
// exported API names no type of an internal package.
//
// Every command package (under cmd/twasm or internal/cli, with a NewCmd
// function) has a test beside it: a command is tested in process through
// its options, and the end-to-end suite keeps what needs a process.
//
// Imports are read with go/build by the test process itself, so go test's
// cache sees a change in any file.
package archtest
