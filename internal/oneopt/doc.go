// Package oneopt reads the optional options argument of the public
// packages' functions: an options struct passed by value as the last,
// variadic argument, so that a call with the defaults leaves it out.
package oneopt
