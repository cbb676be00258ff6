# SPDX-License-Identifier: BSD-3-Clause
# examples/common/examples.cmake: what the examples' CMakeLists share
# (halo3d, stencil2d).

# example_count_loc(OUT PREFIX TAG FILE... [SKIP REGEX]): the non-blank,
# non-comment lines (and none matching SKIP) between "<PREFIX>-LOC-BEGIN
# <TAG>" and "<PREFIX>-LOC-END" in the files: the exchange routines' line
# counts the programs print.
function(example_count_loc out prefix tag)
  cmake_parse_arguments(L "" "SKIP" "" ${ARGN})
  set(n 0)
  foreach(file ${L_UNPARSED_ARGUMENTS})
    file(READ ${file} txt)
    # keep list handling away from the C text: ; [ ] are list syntax
    string(REPLACE ";" "," txt "${txt}")
    string(REPLACE "[" "(" txt "${txt}")
    string(REPLACE "]" ")" txt "${txt}")
    string(REPLACE "\n" ";" lines "${txt}")
    set(inside 0)
    foreach(line IN LISTS lines)
      string(STRIP "${line}" s)
      if(s MATCHES "${prefix}-LOC-BEGIN ${tag}( |$)")
        set(inside 1)
      elseif(s MATCHES "${prefix}-LOC-END")
        set(inside 0)
      elseif(inside AND NOT s STREQUAL "" AND NOT s MATCHES "^(//|/\\*|\\*)" AND (NOT L_SKIP OR NOT s MATCHES "${L_SKIP}"))
        math(EXPR n "${n} + 1")
      endif()
    endforeach()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  endforeach()
  set(${out} ${n} PARENT_SCOPE)
endfunction()

# example_programs(NAME PREFIX SOURCES src... MPIACC src... OPENCL src CUDA src DEFS def...):
#   NAME: every variant, linked with mpiacc (SOURCES and MPIACC, and the
#         OpenCL and CUDA backends that are built); <PREFIX>_WITH_MPIACC=1;
#   NAME-cuda-aware (with CUDA): the cuda-aware variant alone, linked with
#         MPI (the MPICH ABI, libmpi.so.12) and CUDA only -- never mpiacc --
#         so that another MPICH-ABI library (Intel MPI) can be put in with
#         LD_LIBRARY_PATH: the search path is a RUNPATH (--enable-new-dtags),
#         which LD_LIBRARY_PATH overrides.  The command-line parser is
#         compiled in (mpiacc_cli's bench.c calls mpiacc).
# DEFS go to both; the CPU reference uses OpenMP where there is one.
function(example_programs name prefix)
  cmake_parse_arguments(E "" "OPENCL;CUDA" "SOURCES;MPIACC;DEFS" ${ARGN})
  find_package(OpenMP COMPONENTS C)
  set(common ${PROJECT_SOURCE_DIR}/examples/common)
  list(APPEND E_SOURCES ${common}/ex_common.c)
  add_executable(${name} ${E_SOURCES} ${E_MPIACC})
  target_link_libraries(${name} PRIVATE mpiacc mpiacc_cli m)
  target_compile_definitions(${name} PRIVATE ${prefix}_WITH_MPIACC=1 ${E_DEFS})
  set(targets ${name})
  if(MPIACC_HAVE_OPENCL)
    target_sources(${name} PRIVATE ${E_OPENCL})
    target_link_libraries(${name} PRIVATE OpenCL::OpenCL)
    target_compile_definitions(${name} PRIVATE ${prefix}_HAVE_OPENCL=1)
  endif()
  if(MPIACC_HAVE_CUDA)
    target_sources(${name} PRIVATE ${E_CUDA})
    target_link_libraries(${name} PRIVATE CUDA::cudart)
    target_compile_definitions(${name} PRIVATE ${prefix}_HAVE_CUDA=1)
    add_executable(${name}-cuda-aware ${E_SOURCES} ${E_CUDA} ${PROJECT_SOURCE_DIR}/bench/common/cli.c)
    # cli.c includes src/core/number.h (header only)
    target_include_directories(${name}-cuda-aware PRIVATE ${PROJECT_SOURCE_DIR}/bench/common ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${name}-cuda-aware PRIVATE MPI::MPI_C CUDA::cudart m)
    target_link_options(${name}-cuda-aware PRIVATE "LINKER:--enable-new-dtags")
    target_compile_definitions(${name}-cuda-aware PRIVATE ${prefix}_WITH_MPIACC=0 ${prefix}_HAVE_CUDA=1 ${E_DEFS})
    list(APPEND targets ${name}-cuda-aware)
  endif()
  foreach(t ${targets})
    target_include_directories(${t} PRIVATE ${common})
    if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
      target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -O3>)
    endif()
    if(OpenMP_C_FOUND)
      target_link_libraries(${t} PRIVATE OpenMP::OpenMP_C) # the CPU reference
    endif()
  endforeach()
endfunction()
