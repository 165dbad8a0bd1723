// Package plugload opens the plugin host for commands that normalize
// (record, import, renormalize, golden, plugins) and adapts its plugins to
// the capture and normalize packages.
package plugload
