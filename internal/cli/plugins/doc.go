// Package plugins implements `twasm plugins list|verify`.
package plugins
