// Package tail implements "twasm tail".
package tail
