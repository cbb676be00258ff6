/* Placeholder until the datatype engine lands (issue 3). */
#ifndef MPIACC_TRAVERSE_H_INCLUDED
#define MPIACC_TRAVERSE_H_INCLUDED
#endif
