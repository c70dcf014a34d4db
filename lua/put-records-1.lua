--[[
  Records students' records of one term in the term's hash, each only where it is newer than the
  copy already there: writers (a record's PUT or DELETE, an import, a rebuild from PostgreSQL)
  may arrive in any order, and the highest record version wins.

  KEYS[1] records  hash: student -> '<version> <year or -> <majors or -> <groups or ->' (lists
                   joined by commas; a version with no record: '<version> - - -'); the field
                   '~' is present once the whole term was loaded (a join that finds it missing
                   rebuilds the term from PostgreSQL first)

  ARGV[1] '1' to mark the term loaded after writing, '0' not
  ARGV[2 ..] student, value, student, value, ...

  Output: the number of students written
]]
local rcall = redis.call
local written = 0
for i = 2, #ARGV, 2 do
  local student, value = ARGV[i], ARGV[i + 1]
  local current = rcall('HGET', KEYS[1], student)
  local have = current and tonumber(string.match(current, '^(%d+)')) or -1
  if tonumber(string.match(value, '^(%d+)')) > have then
    rcall('HSET', KEYS[1], student, value)
    written = written + 1
  end
end
if ARGV[1] == '1' then rcall('HSET', KEYS[1], '~', '1') end
return written
