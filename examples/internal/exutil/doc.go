// Package exutil holds what every example program needs and none of them
// is about: finding the device from -provider and -dev, waiting for
// completions in polling or event mode, the TCP connection with retry over
// which processes swap their bootstrap bundles, and Ctrl-C.
package exutil
