// Package cmdtest sets up command tests: a Factory over test buffers and a
// storage root holding the views fixture.
package cmdtest
