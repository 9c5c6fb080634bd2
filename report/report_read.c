/* report_read.c — a report in any form (a folder of CSVs, an .xlsx
 * workbook, one .csv file) read back into tables: picks the reader by what
 * the path is, so that the CSV and xlsx readers never call each other. */
#include "report/report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

int tl_report_read(const char *path, unsigned flags, tl_report_tables *out, tl_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0) return tl_errf(err, TL_EIO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return tl_report_csv_read_dir(path, flags, out, err);
    size_t l = strlen(path);
    int is_csv = l > 4 && strcasecmp(path + l - 4, ".csv") == 0;
    if (!is_csv) {
        /* xlsx is a zip: sniff the magic rather than trust the extension */
        unsigned char mag[4] = {0};
        FILE *fp = fopen(path, "rb");
        if (!fp) return tl_errf(err, TL_EIO, "%s: cannot open: %s", path, strerror(errno));
        size_t k = fread(mag, 1, 4, fp);
        fclose(fp);
        if (k == 4 && mag[0] == 'P' && mag[1] == 'K' && mag[2] == 3 && mag[3] == 4)
            return tl_report_xlsx_read(path, flags, out, err);
    }
    tl_table *t;
    int rc = tl_report_csv_read(path, flags, &t, err);
    if (rc == TL_OK) tl_vec_push(out, t);
    return rc;
}
