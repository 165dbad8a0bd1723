// Package browsertest drives a real headless Chromium (Debian's package)
// over the DevTools protocol for the tests of twasm's pages (export
// html's file, serve's app): it finds the browser (skipping the test
// where there is none, failing it in CI, which installs one) and records
// what a page requests and every problem it reports (console errors and
// warnings, exceptions, error log entries), for Browser.Check.
package browsertest
