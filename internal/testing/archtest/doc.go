// Package archtest holds no code: its test keeps the import rule of the
// README's layout table. A runtime package (every package that is neither
// a build tool nor a test helper) imports no build tool and no test helper,
// directly or through another package; its _test.go files may.
//
// Build tools: internal/tools/benchreport, internal/tools/bundlerecord,
// internal/tools/pluginbench, internal/tools/wasmbuild. Test helpers: every package
// whose name ends in "test" (golden/goldentest, internal/testing/plugintest,
// internal/testing/cmdtest, internal/testing/viewstest),
// internal/testing/echoplugin and internal/testing/e2e. Tools and helpers may import
// each other and any runtime package.
package archtest
