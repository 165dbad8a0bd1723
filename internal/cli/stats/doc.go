// Package stats implements "twasm stats".
package stats
