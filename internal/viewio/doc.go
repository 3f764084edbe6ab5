// Package viewio is the software data path of view.View: it moves a
// view's data between the layout's memory and a registered bounce
// segment, checking the signatures of the domain the data comes from and
// placing those of the domain it goes to, the way an mlx5 signature memory
// key does on the NIC. segment builds an Engine from a View's
// configuration; jetty runs the requests whose SGEs name one through
// Begin and End.
package viewio
