/* interposed point-to-point calls */
