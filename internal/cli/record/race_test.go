//go:build race

package record

// raceEnabled: under the race detector a sandboxed plugin's termination
// checks call into instrumented Go code on every loop iteration, which
// makes an external plugin take minutes to start.
const raceEnabled = true
