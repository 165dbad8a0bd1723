// Package build holds the version of the twasm binary.
package build
