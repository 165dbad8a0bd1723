// Package tools implements "twasm tools".
package tools
