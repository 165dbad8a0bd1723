//go:build race

package recorder

// raceEnabled: the race detector makes sync.Pool drop items at random,
// so allocation counts are not checked under it.
const raceEnabled = true
