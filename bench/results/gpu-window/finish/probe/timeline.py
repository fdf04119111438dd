import csv,sys,statistics as st
def load(p):
    rows=[r for r in csv.DictReader(open(p)) if int(r['start'])>0]
    for r in rows:
        for k in ('start','kdone','vdone','end','sm'): r[k]=int(r[k])
    return rows
for p in sys.argv[1:]:
    R=load(p); t0=min(r['start'] for r in R); t1=max(r['end'] for r in R)
    print(p, 'blocks',len(R),'span us %.1f'%((t1-t0)/1e3))
    dur=[(r['end']-r['start'])/1e3 for r in R]; fin=[(r['end']-r['vdone'])/1e3 for r in R]
    kp=[(r['kdone']-r['start'])/1e3 for r in R]; vp=[(r['vdone']-r['kdone'])/1e3 for r in R]
    print(' block dur us: min %.1f med %.1f max %.1f'%(min(dur),st.median(dur),max(dur)))
    print(' K pass med %.1f, V pass med %.1f, finish (vdone->end) min %.2f med %.2f max %.2f'%(st.median(kp),st.median(vp),min(fin),st.median(fin),max(fin)))
    starts=sorted((r['start']-t0)/1e3 for r in R)
    # wave starts histogram by 5 us
    import collections
    h=collections.Counter(int(s//5)*5 for s in starts)
    print(' start histogram (5us bins):', ' '.join(f'{k}:{v}' for k,v in sorted(h.items())))
    ends=sorted((r['end']-t0)/1e3 for r in R)
    h=collections.Counter(int(s//5)*5 for s in ends)
    print(' end histogram (5us bins):', ' '.join(f'{k}:{v}' for k,v in sorted(h.items())))
    # streaming blocks over time (start..vdone), sample every 1us
    T=int((t1-t0)/1e3)+1
    act=[0]*T; fz=[0]*T
    for r in R:
        a=(r['start']-t0)/1e3; b=(r['vdone']-t0)/1e3; c=(r['end']-t0)/1e3
        for t in range(int(a),min(T,int(b)+1)): act[t]+=1
        for t in range(int(b),min(T,int(c)+1)): fz[t]+=1
    print(' streaming blocks per 5us:', ' '.join(str(round(sum(act[i:i+5])/5)) for i in range(0,T,5)))
    print(' finishing blocks per 5us:', ' '.join(str(round(sum(fz[i:i+5])/5)) for i in range(0,T,5)))
    sms=collections.Counter(r['sm'] for r in R)
    print(' SMs used',len(sms),'blocks/SM min',min(sms.values()),'max',max(sms.values()))
