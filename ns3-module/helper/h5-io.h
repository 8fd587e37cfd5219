/* qreplay ns-3 module: small C++ wrappers over the core's HDF5 writer and reader that throw
 * std::runtime_error with the core's message on the first error, and mkdir -p. Shared by the
 * runtime, the replay pipeline and the programs. */
#ifndef QREPLAY_H5_IO_H
#define QREPLAY_H5_IO_H

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <vector>

extern "C" {
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/scenario.h"
}

namespace ns3
{

/* mkdir -p dir; throws naming the folder. */
inline void
MakeDirs(const std::string& dir)
{
    for (size_t i = 1; i <= dir.size(); i++)
    {
        if (i == dir.size() || dir[i] == '/')
        {
            std::string cur = dir.substr(0, i);
            if (mkdir(cur.c_str(), 0777) != 0 && errno != EEXIST)
                throw std::runtime_error(cur + ": cannot create folder: " + strerror(errno));
        }
    }
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw std::runtime_error(dir + ": not a folder");
}

/* One HDF5 file written through the core's writer; throws on the first error. */
class H5Out
{
  public:
    explicit H5Out(const std::string& path) { Check(qr_h5_create(&m_f, path.c_str(), m_err)); }
    ~H5Out() { qr_h5_abort(m_f); }
    qr_h5_table* Table(const std::string& name, const qr_h5_field* f, size_t n, size_t rowSize)
    {
        qr_h5_table* t = nullptr;
        Check(qr_h5_table_create(&t, m_f, name.c_str(), f, n, rowSize, 0, m_err));
        return t;
    }
    void Append(qr_h5_table* t, const void* rows, size_t n) { Check(qr_h5_table_append(t, rows, n, m_err)); }
    void Close(qr_h5_table* t) { Check(qr_h5_table_close(t, m_err)); }
    template <typename Row>
    void Rows(const std::string& name, const qr_h5_field* f, size_t n, const std::vector<Row>& rows)
    {
        qr_h5_table* t = Table(name, f, n, sizeof(Row));
        Append(t, rows.data(), rows.size());
        Close(t);
    }
    void Group(const std::string& g) { Check(qr_h5_group(m_f, g.c_str(), m_err)); }
    void Attr(const std::string& o, const char* n, uint64_t v) { Check(qr_h5_attr_u64(m_f, o.c_str(), n, v, m_err)); }
    void AttrI(const std::string& o, const char* n, int64_t v) { Check(qr_h5_attr_i64(m_f, o.c_str(), n, v, m_err)); }
    void AttrF(const std::string& o, const char* n, double v) { Check(qr_h5_attr_f64(m_f, o.c_str(), n, v, m_err)); }
    void AttrS(const std::string& o, const char* n, const std::string& v)
    {
        Check(qr_h5_attr_str(m_f, o.c_str(), n, v.c_str(), m_err));
    }
    void Scenario(const qr_scenario* s) { Check(qr_scenario_write_h5(s, m_f, "/", m_err)); }
    void Commit()
    {
        qr_h5* f = m_f;
        m_f = nullptr;
        Check(qr_h5_commit(f, m_err));
    }

  private:
    void Check(int rc)
    {
        if (rc)
            throw std::runtime_error(m_err);
    }
    qr_h5* m_f{nullptr};
    char m_err[QR_ERRBUF_SIZE];
};

class H5In
{
  public:
    explicit H5In(const std::string& path)
    {
        if (qr_h5_open(&m_r, path.c_str(), m_err))
            throw std::runtime_error(m_err);
    }
    ~H5In() { qr_h5_close(m_r); }
    template <typename Row>
    std::vector<Row> Rows(const char* name, const qr_h5_field* f, size_t n)
    {
        void* rows = nullptr;
        size_t count = 0;
        if (qr_h5_read_table(m_r, name, f, n, sizeof(Row), &rows, &count, m_err))
            throw std::runtime_error(m_err);
        std::vector<Row> v(static_cast<Row*>(rows), static_cast<Row*>(rows) + count);
        free(rows);
        return v;
    }
    double Num(const char* obj, const char* name)
    {
        double v;
        if (qr_h5_read_attr_f64(m_r, obj, name, &v, m_err))
            throw std::runtime_error(m_err);
        return v;
    }
    std::string Str(const char* obj, const char* name)
    {
        char* v = nullptr;
        if (qr_h5_read_attr_str(m_r, obj, name, &v, m_err))
            throw std::runtime_error(m_err);
        std::string s(v);
        free(v);
        return s;
    }

  private:
    qr_h5_reader* m_r{nullptr};
    char m_err[QR_ERRBUF_SIZE];
};

} // namespace ns3

#endif
