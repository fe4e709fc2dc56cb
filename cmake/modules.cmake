# ggserve_module(NAME DIR [DEPS ...]): a static library from every .cpp under DIR (non-recursive
# subdirectories are separate modules). New files are picked up at the next build (CONFIGURE_DEPENDS).
function(ggserve_module name dir)
    file(GLOB srcs CONFIGURE_DEPENDS ${dir}/*.cpp)
    if(NOT srcs)
        add_library(${name} INTERFACE)
        target_link_libraries(${name} INTERFACE ${ARGN})
        target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/ggml/include)
        return()
    endif()
    add_library(${name} STATIC ${srcs})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/ggml/include)
    target_link_libraries(${name} PUBLIC ${ARGN})
endfunction()
