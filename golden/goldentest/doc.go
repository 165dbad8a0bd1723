// Package goldentest runs golden checks as Go subtests (kept apart from
// package golden so that binaries using golden do not link "testing").
package goldentest
