// Package regfile opens the files of a twasm storage for reading the way
// every reader should: without blocking on a FIFO planted at the path, and
// refusing anything but a regular file with an error that says what it is.
// The recorder's writer refuses the same files with the same error.
// ReadFile reads a small file the user names or a directory holds (a
// config file, a plugin module, a cache record) the same way, bounded:
// a FIFO or a link to /dev/zero is refused at once instead of hanging the
// command.
package regfile
