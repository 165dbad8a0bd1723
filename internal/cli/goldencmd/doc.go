// Package goldencmd implements `twasm golden check|update`: run plugins
// over golden inputs through the real wasm path and compare with (or
// rewrite) the expected renderings. Plugin authors run it in their CI.
package goldencmd
