// Package exutil holds what every example program needs and none of them
// is about: finding the device from -provider and -dev, waiting for
// completions in polling or event mode, the out-of-band TCP channel that
// carries descriptors between processes, and Ctrl-C.
package exutil
