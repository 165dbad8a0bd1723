// Package tree implements "twasm tree".
package tree
