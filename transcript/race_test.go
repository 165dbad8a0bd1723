//go:build race

package transcript

// raceEnabled skips the 64 MiB line test under the race detector, where it
// takes most of a minute; the long-line paths are still covered there by
// the small-buffer tests.
const raceEnabled = true
