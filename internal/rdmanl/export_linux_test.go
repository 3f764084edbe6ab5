package rdmanl

// SetTap makes c pass every buffer the kernel returns to fn.
func (c *Conn) SetTap(fn func([]byte)) { c.tap = fn }
