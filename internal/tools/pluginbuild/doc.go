// Command pluginbuild builds a plugin's module for the bundle, as the
// Makefile's rules do, with standard Go or with TinyGo (found as
// wasmbuild.FindTinyGo finds it: $TINYGO and $TINYGO_FLAGS, which the
// Makefile exports), and keeps a copy of the module in the tests' build
// cache (wasmbuild.TestCacheDir) under the key a test's build of the same
// sources with the same toolchain would have: the tests that build the
// bundled plugins themselves (pluginbench, record's) then find the
// modules make has just built instead of building them again, byte for
// byte the same (wasmbuild.Toolchain.BuildInto).
//
//	go run ./internal/tools/pluginbuild -toolchain tinygo -o internal/bundled/wasm/claude.wasm ./plugins/claude/wasm
package main
