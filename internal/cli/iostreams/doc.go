// Package iostreams bundles the standard streams of a command with what a
// command needs to know about them: whether stdout is a terminal and
// whether to use color.
package iostreams
