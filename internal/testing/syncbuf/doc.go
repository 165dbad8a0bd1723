// Package syncbuf is a test helper: a byte buffer that one goroutine (a
// logger, a subprocess's output copier) may write while another reads it.
package syncbuf
