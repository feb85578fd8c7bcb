/*
 * version.h - oomlint's version, shown by --version, SARIF's tool.driver and
 * the language server's serverInfo.
 */
#ifndef OL_VERSION_H
#define OL_VERSION_H

#define OL_VERSION "0.1.0"

#endif
