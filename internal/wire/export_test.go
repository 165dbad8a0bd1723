package wire

// CheckTape gives the tests of package wire_test the check the batch
// decoder makes of every tape.
var CheckTape = checkTape
