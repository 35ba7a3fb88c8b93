"""The version, in a module of its own: the formats stamp it on what they
write and the command line prints it, and none of them may import the
package face (``vis_export``), which imports the API and so everything."""

__version__ = "0.1.0"
