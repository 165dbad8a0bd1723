// Package e2e holds the end-to-end tests of the twasm command line: they
// build the binary (with the bundled plugins they need) and drive it as a
// subprocess, with a fake agent that replays real-shaped provider streams.
// The package has no code outside its tests.
package e2e
