// Package version implements "twasm version".
package version
