import csv,statistics as st,sys
for p in sys.argv[1:]:
    R=[r for r in csv.DictReader(open(p)) if int(r['start'])>0]
    for r in R:
        for k in r: r[k]=int(r[k])
    print(p, len(R))
    for a,b in [('start','kdone'),('kdone','vdone'),('vdone','presync'),('presync','postsync'),('postsync','owritten'),('owritten','obsdone'),('obsdone','end'),('vdone','end')]:
        x=[(r[b]-r[a])/1e3 for r in R]; print('  %-9s->%-9s min %.2f med %.2f p90 %.2f max %.2f'%(a,b,min(x),st.median(x),sorted(x)[int(.9*len(x))],max(x)))
