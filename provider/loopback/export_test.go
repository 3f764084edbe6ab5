package loopback

// SetRuns turns the delivery of SEND runs (sendrun.go) on or off, so that a
// test can compare a post list delivered in runs with the same list
// delivered one request at a time. Only for tests, and only while no post
// is under way.
func SetRuns(on bool) { runsOff = !on }
