package main

import "errors"

func joinErr(errs ...error) error { return errors.Join(errs...) }
