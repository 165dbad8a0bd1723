// Package archtest holds no code: its test keeps the import rule of the
// README's layout table. A runtime package (every package that is neither
// a build tool nor a test helper) imports no build tool and no test helper,
// directly or through another package; its _test.go files may.
//
// Build tools: internal/benchreport, internal/bundled/record,
// internal/pluginbench, internal/wasmbuild. Test helpers: every package
// whose name ends in "test" (golden/goldentest, plugins/plugintest,
// internal/cli/cmdutil/cmdtest, internal/views/viewstest),
// internal/echoplugin and internal/cli/e2e. Tools and helpers may import
// each other and any runtime package.
package archtest
